-- wrk script for scripts/bench-scale: every request names the next host of a list in its Host header,
-- so keep-alive connections spread their requests over every domain.
--
--   BENCH_HOSTS=hosts.txt wrk -s scripts/wrk-spread.lua http://127.0.0.1:PORT/.well-known/apple-app-site-association
--
-- The requests are formatted once, in init, so a list of one host and a list of 10,000 cost wrk the same
-- per request; each thread starts at its own place in the list and walks it round robin.

local requests = {}
local count = 0
local position = 0
local threads = 0

function setup(thread)
    thread:set("id", threads)
    threads = threads + 1
end

function init(args)
    local path = wrk.path
    for host in io.lines(os.getenv("BENCH_HOSTS")) do
        if host ~= "" then
            count = count + 1
            requests[count] = wrk.format("GET", path, { ["Host"] = host })
        end
    end
    position = (id or 0) * 7919 % count
end

function request()
    position = position % count + 1
    return requests[position]
end
