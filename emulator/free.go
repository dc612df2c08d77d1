package emulator

import "time"

// pollinationsFailure: Pollinations' 402 bodies as docs/PROVIDERS.md quotes
// them (github.com/pollinations/pollinations/issues/9924, /9168, /6566):
// spent pollen for a rate limit of either window (the balance refills by
// the hour), a model above the caller's tier for a missing or forbidden
// model. Its 429 and 401 bodies were not captured: its own envelope
// around the status text is assumed. Sources: testdata/free/README.md.
func pollinationsFailure(c *call, now time.Time) failure {
	envelope := func(status int, msg, code string) failure {
		return failure{status: status, body: compact(obj{{"success", false},
			{"error", obj{{"message", msg}, {"code", code}, {"timestamp", now.UTC().Format("2006-01-02T15:04:05.000Z")}}},
			{"status", status}})}
	}
	switch c.kind {
	case RateDay:
		return envelope(402, "Insufficient balance. This model costs ~0.0136 pollen per request, but your available balance is 0.0000.", "PAYMENT_REQUIRED")
	case RateMinute:
		return envelope(429, "Too Many Requests", "RATE_LIMITED")
	case NotFound, Forbidden, Decommissioned:
		return failure{status: 402, body: compact(obj{{"error", "Model not found or tier not high enough. Your tier: anonymous, required tier: seed. Get unlimited access at https://enter.pollinations.ai"}, {"status", 402}})}
	case Unauthorized:
		return envelope(401, "Invalid API key", "UNAUTHORIZED")
	}
	return genericFailure(c)
}

// huggingFaceFailure: the router's 402 when the month's free credits are
// spent, quoted in github.com/huggingface/agents-course/issues/386
// [2025-03]; its per-minute 429 body was not captured (a flat "error"
// string like the 402 is assumed). The rest is OpenAI's shape, which the
// router passes on from its providers.
func huggingFaceFailure(c *call) failure {
	switch c.kind {
	case RateDay:
		return failure{status: 402, body: compact(obj{{"error", "You have exceeded your monthly included credits for Inference Providers. Subscribe to PRO to get 20x more monthly included credits."}})}
	case RateMinute:
		return failure{status: 429, body: compact(obj{{"error", "Too Many Requests"}})}
	}
	return genericFailure(c)
}

// cohereFailure: a trial key's 429s, as client code quotes them
// (testdata/free/README.md): "limited to 20 API calls / minute" for the
// minute, "limited to 1000 API calls / month. ..." for the month (the
// emulator's day window stands in for it), with a request id.
func cohereFailure(c *call) failure {
	const id = "6f1c2a5e-0b1d-4c1e-9a51-3f3d2f0c9e11"
	switch c.kind {
	case RateMinute:
		return failure{status: 429, body: compact(obj{{"id", id}, {"message", "You are using a Trial key, which is limited to 20 API calls / minute."}})}
	case RateDay:
		return failure{status: 429, body: compact(obj{{"id", id}, {"message", "You are using a Trial key, which is limited to 1000 API calls / month. You can continue to use the Trial key for free or upgrade to a Production key with higher rate limits."}})}
	}
	return genericFailure(c)
}

// zaiFailure: Z.ai's 429s carry a numeric code as a string and a request id
// beside the error object (testdata/free/README.md): code 1302 "Rate limit
// reached for requests" for a rate limit of either window (Z.ai publishes
// no free-tier windows; a spent day is not distinguished in the captured
// bodies), and code 1302 again, still a 429, for its concurrency throttle
// ("High concurrency usage of this API, ..."): its high demand.
func zaiFailure(c *call, now time.Time) failure {
	body := func(msg string) failure {
		return failure{status: 429, body: compact(obj{{"error", obj{{"code", "1302"}, {"message", msg}}},
			{"request_id", now.UTC().Format("20060102150405") + "579f5b8f457f4e06"}})}
	}
	switch c.kind {
	case RateMinute, RateDay:
		return body("Rate limit reached for requests")
	case HighDemand:
		return body("High concurrency usage of this API, please reduce concurrency or contact customer service to increase limits")
	}
	return genericFailure(c)
}
