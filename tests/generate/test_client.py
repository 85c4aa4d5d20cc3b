"""What the client sends: the requests go through the real ``openai`` client, without its
telemetry headers but with the retry count the draw ledger records."""

from __future__ import annotations

from modebench.generate._client import TELEMETRY_HEADERS, _client
from modebench.generate._settings import GenerationSettings


def test_requests_leave_out_the_telemetry_headers_only() -> None:
    from openai._models import FinalRequestOptions

    settings = GenerationSettings(model="m", base_url="http://127.0.0.1:9/v1", k=1, max_retries=3)
    client = _client(settings, "secret")
    url = str(client.base_url) + "chat/completions"
    options = FinalRequestOptions.construct(method="post", url=url, json_data={"model": "m"})
    request = client._build_request(options, retries_taken=2)
    assert str(request.url) == "http://127.0.0.1:9/v1/chat/completions"
    sent = {name.lower() for name in request.headers}
    assert not sent & {name.lower() for name in TELEMETRY_HEADERS}
    assert request.headers["authorization"] == "Bearer secret"
    assert request.headers["x-stainless-retry-count"] == "2"  # read back as the draw's retries
    assert request.headers["user-agent"].startswith("AsyncOpenAI/Python")
