-- wrk's script for webhook intake (build/bench.sh, build/bench-peers.sh): a
-- POST with its own webhook-id each, and at the end how many answers were 2xx
-- and how many were not ("2xx N" and "not2xx N" lines).
local threads, counter = {}, 0
function setup(thread)
  counter = counter + 1
  thread:set("id", counter)
  table.insert(threads, thread)
end
function init(args) ok, bad = 0, 0 end
local n = 0
wrk.method = "POST"
wrk.body = '{"type":"order.created","data":{"id":"ord_123","amount":4200,"currency":"eur","customer":"cus_9"}}'
function request()
  n = n + 1
  return wrk.format(nil, nil, {["Content-Type"] = "application/json", ["webhook-id"] = "msg_" .. id .. "_" .. n})
end
function response(status, headers, body)
  if status >= 200 and status < 300 then ok = ok + 1 else bad = bad + 1 end
end
function done(summary, latency, requests)
  local o, b = 0, 0
  for _, t in ipairs(threads) do o, b = o + t:get("ok"), b + t:get("bad") end
  io.write(string.format("2xx %d\nnot2xx %d\n", o, b))
end
