-- wrk script for bench/http.ts: cycles through pre-made requests, one per
-- line of BENCH_FILE as "path<TAB>body" (empty body: none). Each wrk thread
-- takes a disjoint slice of the lines, so one-time items (proof submissions)
-- are each sent once until a thread wraps around; `wraps` reports that.
-- Prints one "BENCH_JSON {...}" line with the figures and the status counts.
local threads = {}
local count = 0

function setup(thread)
  count = count + 1
  thread:set("id", count)
  table.insert(threads, thread)
end

function init(args)
  local nthreads = tonumber(os.getenv("BENCH_THREADS"))
  method = os.getenv("BENCH_METHOD") or "GET"
  headers = { ["X-Api-Key"] = os.getenv("BENCH_KEY") or "", ["Content-Type"] = "application/json" }
  items = {}
  local i = 0
  for line in io.lines(os.getenv("BENCH_FILE")) do
    if i % nthreads == id - 1 then
      local tab = line:find("\t", 1, true)
      local body = line:sub(tab + 1)
      items[#items + 1] = { line:sub(1, tab - 1), body ~= "" and body or nil }
    end
    i = i + 1
  end
  -- Fewer lines than threads (a single repeated request): every thread takes them all.
  if #items == 0 then
    for line in io.lines(os.getenv("BENCH_FILE")) do
      local tab = line:find("\t", 1, true)
      local body = line:sub(tab + 1)
      items[#items + 1] = { line:sub(1, tab - 1), body ~= "" and body or nil }
    end
  end
  index = 0
  wraps = 0
  statuses = {}
end

function request()
  index = index + 1
  if index > #items then
    index = 1
    wraps = wraps + 1
  end
  local item = items[index]
  return wrk.format(method, item[1], headers, item[2])
end

function response(status, headers, body)
  statuses[status] = (statuses[status] or 0) + 1
end

function done(summary, latency, requests)
  local merged, wrapped = {}, 0
  for _, thread in ipairs(threads) do
    for status, n in pairs(thread:get("statuses")) do merged[status] = (merged[status] or 0) + n end
    wrapped = wrapped + thread:get("wraps")
  end
  local parts = {}
  for status, n in pairs(merged) do parts[#parts + 1] = string.format('"%d":%d', status, n) end
  local e = summary.errors
  io.write(string.format(
    'BENCH_JSON {"requests":%d,"duration_us":%d,"p50_us":%d,"p99_us":%d,"socket_errors":%d,"wraps":%d,"statuses":{%s}}\n',
    summary.requests, summary.duration, latency:percentile(50), latency:percentile(99),
    e.connect + e.read + e.write + e.timeout, wrapped, table.concat(parts, ",")))
end
