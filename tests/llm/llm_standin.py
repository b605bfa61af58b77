"""A loopback model server that speaks the Anthropic Messages, Bedrock invoke and OpenAI
chat-completions wire formats, answering from a script, so the real SDKs are exercised."""

from __future__ import annotations

import copy
import json
import threading
from collections import deque
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

SAMPLES = Path(__file__).parent / "samples"


def sample(name: str) -> dict[str, Any]:
    return json.loads((SAMPLES / name).read_text())


@dataclass
class Scripted:
    """One scripted answer: a form payload (dict or raw text), or an HTTP error status."""

    payload: Any = None
    status: int = 200
    tokens_in: int = 1000
    tokens_out: int = 120


@dataclass
class Seen:
    path: str
    headers: dict[str, str]
    body: dict[str, Any]


@dataclass
class StandIn:
    """The server's state: what to answer next and what it was asked."""

    script: deque[Scripted] = field(default_factory=deque)
    requests: list[Seen] = field(default_factory=list)
    url: str = ""

    def push(self, *answers: Scripted | dict[str, Any] | str) -> None:
        for a in answers:
            self.script.append(a if isinstance(a, Scripted) else Scripted(payload=a))


def _anthropic_body(item: Scripted, model: str) -> dict[str, Any]:
    body = sample("anthropic_message.json")
    body["model"] = model
    if isinstance(item.payload, dict):
        body["content"][1]["input"] = item.payload
    else:  # the model talked instead of calling the tool
        body["content"] = [{"type": "text", "text": str(item.payload)}]
        body["stop_reason"] = "end_turn"
    body["usage"].update(input_tokens=item.tokens_in, output_tokens=item.tokens_out)
    return body


def _openai_body(item: Scripted, model: str) -> dict[str, Any]:
    body = sample("openai_chat_completion.json")
    body["model"] = model
    text = item.payload if isinstance(item.payload, str) else json.dumps(item.payload)
    body["choices"][0]["message"]["content"] = text
    body["usage"] = {"prompt_tokens": item.tokens_in, "completion_tokens": item.tokens_out,
                     "total_tokens": item.tokens_in + item.tokens_out}
    return body


def _handler(state: StandIn) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        def log_message(self, *args: Any) -> None:
            pass

        def do_POST(self) -> None:
            raw = self.rfile.read(int(self.headers.get("content-length", 0)))
            body = json.loads(raw or b"{}")
            state.requests.append(Seen(self.path, {k.lower(): v for k, v in self.headers.items()},
                                       copy.deepcopy(body)))
            item = state.script.popleft() if state.script else Scripted(status=500)
            if self.path.endswith("/chat/completions"):
                reply = sample("openai_error.json") if item.status != 200 else \
                    _openai_body(item, body.get("model", ""))
            else:
                model = body.get("model") or self.path.split("/model/")[-1].split("/")[0]
                reply = sample("anthropic_error.json") if item.status != 200 else \
                    _anthropic_body(item, model)
            data = json.dumps(reply).encode()
            self.send_response(item.status)
            self.send_header("content-type", "application/json")
            self.send_header("content-length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

    return Handler


class Server:
    """Context manager: a StandIn served on 127.0.0.1 at a free port."""

    def __enter__(self) -> StandIn:
        self.state = StandIn()
        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), _handler(self.state))
        self.state.url = f"http://127.0.0.1:{self.httpd.server_address[1]}"
        self.thread = threading.Thread(target=self.httpd.serve_forever, kwargs={"poll_interval": 0.01}, daemon=True)
        self.thread.start()
        return self.state

    def __exit__(self, *exc: Any) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()
        self.thread.join()
