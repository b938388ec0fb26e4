-- wrk script: GET with the bearer token from PRAXA_TOKEN (the path comes
-- from the URL on wrk's command line).

wrk.headers["Authorization"] = "Bearer " .. (os.getenv("PRAXA_TOKEN") or "")
