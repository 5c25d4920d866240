// Package replica owns device sync: it keeps a workspace's records the same
// on every device that joined it, through the relay's change log of opaque
// records (sync/protocol), which keeps only the newest change per key.
//
// # Capture
//
// Enable generates SQLite triggers from the table list (Tables): after an
// insert, a real change of a synced column, or a delete, a row's table and
// primary key (json_array of the key columns) and the time go to
// sync_outbox — in the writer's own transaction, whichever service wrote.
// Rows the engine writes while applying remote changes are not captured
// (the one-row sync_applying flag; triggers cannot see TEMP tables).
// Adding a table is one Tables entry; its columns are read from the
// schema, so later migrations' columns sync too.
//
// # Clock and records
//
// Stamp gives each captured row a hybrid logical clock reading (wall ms of
// the change, a counter, and the device id as the tiebreak) in
// sync_records, also while offline, so an offline edit carries the time it
// was made. A remote reading moves the local clock past it. The newest
// reading wins per record (last writer wins); a delete is a tombstone that
// stays in sync_records.
//
// A record travels as JSON {table, pk, hlc, device, deleted, row, files},
// sealed with XChaCha20-Poly1305 (random 24-byte nonce, additional data:
// workspace id and the record's key) under a key derived with HKDF from
// the workspace's 32-byte sync key; its relay key is the hex HMAC-SHA256
// of table and primary key under a second derived key, so the relay learns
// neither table names nor ids. A body that does not open, or names another
// row than its key, is logged (without content) and skipped.
//
// # Apply
//
// A pulled page is applied in ONE immediate transaction that first stamps
// pending local changes (so a concurrent local edit is compared, never
// silently overwritten), then, in relay order, upserts the synced columns
// of (or deletes) each row whose record is newer than this device's. A row
// whose parent has not arrived is parked and retried after each batch; one
// whose parent is a tombstone is dropped. Two agents made apart with one
// handle are settled the same way on every device (the smaller id keeps
// it). After the commit the engine writes carried folders (templates),
// runs the hooks registered with OnApply (the workspace creates agents'
// folders, writes skill files, re-plans schedules) and publishes the bus
// events the UI already listens to.
//
// # Serve
//
// Serve stamps on every bus change and a short ticker, pushes what is
// stamped, pulls on Notify, after a push and every 30 s, and backs off
// exponentially on errors; Status is what the app shows. Schedules fire on
// one device: the synced setting automations_device (Active).
package replica
