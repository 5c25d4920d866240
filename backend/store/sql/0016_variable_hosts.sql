-- The hosts a variable's value may be sent to (backend/secret/hosts.go): a
-- JSON array of exact hosts and *.domain wildcards; [] means any host.
ALTER TABLE variables ADD COLUMN hosts TEXT NOT NULL DEFAULT '[]';
