-- wrk script: POST /v8/intents with a new Idempotency-Key on every request.
-- Environment: PRAXA_TOKEN (bearer token), KEY_PREFIX (unique per wrk run,
-- [A-Za-z0-9._:-] only). Keys are KEY_PREFIX-t<thread>-<counter>, so no key
-- repeats within a run or across runs.

local token = os.getenv("PRAXA_TOKEN") or ""
local prefix = os.getenv("KEY_PREFIX") or ("wrk-" .. os.time())
local body = '{"intent":"deploy the payments service to staging once the integration tests pass, then notify the on-call channel","tags":["deploy","payments","staging"]}'

local next_id = 0
function setup(thread)
  next_id = next_id + 1
  thread:set("thread_id", next_id)
end

local counter = 0
function request()
  counter = counter + 1
  local key = string.format("%s-t%d-%09d", prefix, thread_id or 0, counter)
  return wrk.format("POST", "/v8/intents", {
    ["Authorization"] = "Bearer " .. token,
    ["Content-Type"] = "application/json",
    ["Idempotency-Key"] = key,
  }, body)
end
