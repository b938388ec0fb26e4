-- wrk script: POST /v8/praxec/query {} (the home read, answered from
-- memory) with the bearer token from PRAXA_TOKEN.

wrk.method = "POST"
wrk.body = "{}"
wrk.headers["Content-Type"] = "application/json"
wrk.headers["Authorization"] = "Bearer " .. (os.getenv("PRAXA_TOKEN") or "")
