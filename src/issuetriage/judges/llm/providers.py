"""One seam per model provider: send a Prompt, get back the form's payload and token counts.

Anthropic (API or Bedrock) answers through a forced tool call; OpenAI-compatible servers (vLLM,
Ollama, llama.cpp, OpenAI) through a strict JSON-schema response format. SDKs are imported
lazily so the core runs without them. Outages become ProviderOutage (the judge degrades to the
offline judge); other client errors (bad key, unknown model) are LLMErrors the user must fix.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

from issuetriage.errors import ConfigError, LLMError, UserError
from issuetriage.judges.llm.config import LLMConfig
from issuetriage.judges.llm.prompt import TOOL_NAME, Prompt

RETRY_NOTE = ("Your previous answer did not match the form ({error}). Call `{tool}` once, with "
              "every field present and only the allowed values.")


class ProviderOutage(LLMError):
    """The provider could not be reached or is overloaded: degrade, do not stop."""


@dataclass(frozen=True)
class Reply:
    """What came back: the form's payload (dict, JSON text or None) and what it cost in tokens."""

    payload: Any
    tokens_in: int
    tokens_out: int


class Provider(Protocol):
    """Anything that can answer a Prompt."""

    model: str

    def complete(self, prompt: Prompt, retry_error: str | None = None) -> Reply:
        """Send the prompt (with a correction note when retrying) and return the reply."""
        ...


def _user_text(prompt: Prompt, retry_error: str | None) -> str:
    if retry_error is None:
        return prompt.user
    return prompt.user + "\n\n" + RETRY_NOTE.format(error=retry_error, tool=TOOL_NAME)


def _is_outage(status: int | None) -> bool:
    return status is None or status in {408, 409, 429} or status >= 500


class AnthropicProvider:
    """Claude through the Messages API, on Anthropic or on Bedrock (same SDK, other client).
    https://docs.anthropic.com/en/api/messages"""

    def __init__(self, client: Any, model: str, max_tokens: int = 1024) -> None:
        self.client, self.model, self.max_tokens = client, model, max_tokens

    def complete(self, prompt: Prompt, retry_error: str | None = None) -> Reply:
        import anthropic

        tool = {"name": TOOL_NAME, "description": "Submit the triage form for this issue.",
                "input_schema": prompt.schema}
        try:
            message = self.client.messages.create(
                model=self.model, max_tokens=self.max_tokens, system=prompt.system, tools=[tool],
                tool_choice={"type": "tool", "name": TOOL_NAME},
                messages=[{"role": "user", "content": _user_text(prompt, retry_error)}],
            )
        except anthropic.APIStatusError as exc:
            _raise(exc.status_code, f"anthropic: {exc.status_code} {exc.message}")
        except anthropic.APIConnectionError as exc:
            raise ProviderOutage(f"anthropic: cannot connect: {exc}") from None
        payload = next((b.input for b in message.content if b.type == "tool_use"), None)
        if payload is None:
            payload = "".join(getattr(b, "text", "") for b in message.content)
        usage = message.usage
        return Reply(payload, usage.input_tokens or 0, usage.output_tokens or 0)


class OpenAICompatibleProvider:
    """Any chat-completions server with JSON-schema output: OpenAI, vLLM, Ollama, llama.cpp.
    https://platform.openai.com/docs/api-reference/chat/create"""

    def __init__(self, client: Any, model: str, max_tokens: int = 1024) -> None:
        self.client, self.model, self.max_tokens = client, model, max_tokens

    def complete(self, prompt: Prompt, retry_error: str | None = None) -> Reply:
        import openai

        try:
            completion = self.client.chat.completions.create(
                model=self.model, max_tokens=self.max_tokens, temperature=0,
                messages=[{"role": "system", "content": prompt.system},
                          {"role": "user", "content": _user_text(prompt, retry_error)}],
                response_format={"type": "json_schema", "json_schema": {
                    "name": TOOL_NAME, "schema": prompt.schema, "strict": True}},
            )
        except openai.APIStatusError as exc:
            _raise(exc.status_code, f"openai-compatible: {exc.status_code} {exc.message}")
        except openai.APIConnectionError as exc:
            raise ProviderOutage(f"openai-compatible: cannot connect: {exc}") from None
        choice = completion.choices[0] if completion.choices else None
        payload = choice.message.content if choice and choice.message else None
        usage = completion.usage
        return Reply(payload, getattr(usage, "prompt_tokens", 0) or 0,
                     getattr(usage, "completion_tokens", 0) or 0)


def _raise(status: int | None, message: str) -> None:
    if _is_outage(status):
        raise ProviderOutage(message) from None
    raise LLMError(message) from None


def _require(module: str, extra: str) -> Any:
    try:
        return __import__(module)
    except ImportError:
        raise ConfigError(f"the {extra!r} provider needs its SDK: pip install "
                          f"'issuetriage[{extra}]'") from None


class ReplayProvider:
    """Answers recorded earlier (by a real key, or a model that read only the exported request),
    replayed through the real path: schema validation, tree and guard. No key, no network.
    The file is JSONL, one object a line: `repo`, `number`, `answer` (the form as JSON), and
    optionally `model` and `prompt_version` (docs/llm.md). A missing answer is an outage, so
    the judge falls back to the offline judge and says so."""

    def __init__(self, path: Path, repo: str | None = None) -> None:
        self.path = Path(path)
        self.answers = read_recordings(self.path, repo)
        models = {str(record.get("model") or "") for record in self.answers.values()}
        named = models.pop() if len(models) == 1 else ""
        self.model = f"replay:{named}" if named else "replay"

    def complete(self, prompt: Prompt, retry_error: str | None = None) -> Reply:
        record = self.answers.get((prompt.repo, prompt.number))
        if record is None:
            raise ProviderOutage(f"no recorded answer for {prompt.repo}#{prompt.number}")
        version = record.get("prompt_version")
        if version is not None and version != prompt.version:
            raise ProviderOutage(f"the answer for {prompt.repo}#{prompt.number} was recorded "
                                 f"for prompt {version}, not {prompt.version}")
        digest = record.get("prompt_digest")
        if digest is not None and digest != prompt.digest:
            raise ProviderOutage(f"the answer for {prompt.repo}#{prompt.number} was recorded "
                                 f"for another request (digest {str(digest)[:12]})")
        return Reply(record["answer"], 0, 0)


def read_recordings(path: Path, repo: str | None = None) -> dict[tuple[str, int], dict[str, Any]]:
    """A recording file's answers by (repo, number); UserError (exit 2) for an unusable file."""
    answers: dict[tuple[str, int], dict[str, Any]] = {}
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise UserError(f"{path}: cannot read recorded answers ({exc})") from None
    for lineno, line in enumerate(text.splitlines(), 1):
        if line.strip():
            record = _recorded(line, f"{path}:{lineno}", repo)
            key = (record["repo"], record["number"])
            if key in answers:
                raise UserError(f"{path}:{lineno}: a second answer for {key[0]}#{key[1]}")
            answers[key] = record
    return answers


def _recorded(line: str, where: str, repo: str | None) -> dict[str, Any]:
    """One recording line, checked; UserError (exit 2) when it is not a usable record."""
    try:
        record = json.loads(line)
    except json.JSONDecodeError as exc:
        raise UserError(f"{where}: recorded answers must be JSONL ({exc.msg})") from None
    if not isinstance(record, dict):
        raise UserError(f"{where}: expected a JSON object, got {type(record).__name__}")
    number = record.get("number")
    if not isinstance(record.get("repo"), str) or not isinstance(number, int) or isinstance(number, bool):
        raise UserError(f"{where}: each answer needs \"repo\" (OWNER/NAME) and \"number\" (int)")
    if repo is not None and record["repo"] != repo:
        raise UserError(f"{where}: answer for {record['repo']}#{number}, not the profile's "
                        f"repository {repo}")
    if "answer" not in record:
        raise UserError(f"{where}: missing field \"answer\"")
    return record


def make_provider(config: LLMConfig, repo: str | None = None) -> Provider:
    """Build the provider a config names; keys come only from the environment."""
    if config.provider == "replay":
        if config.answers is None:
            raise ConfigError("the replay provider needs recorded answers "
                              "(--answers FILE or $ISSUETRIAGE_LLM_ANSWERS)")
        return ReplayProvider(config.answers, repo)
    common = {"max_retries": config.max_retries, "timeout": config.timeout}
    if config.provider == "anthropic":
        sdk = _require("anthropic", "anthropic")
        client = sdk.Anthropic(api_key=config.api_key(), base_url=config.base_url, **common)
        return AnthropicProvider(client, config.model, config.max_tokens)
    if config.provider == "bedrock":
        sdk = _require("anthropic", "bedrock")
        try:
            client = sdk.AnthropicBedrock(aws_region=config.region, base_url=config.base_url, **common)
        except ValueError as exc:  # no region, or a token and keys at once
            raise ConfigError(f"bedrock: {exc}") from None
        return AnthropicProvider(client, config.model, config.max_tokens)
    sdk = _require("openai", "openai")
    client = sdk.OpenAI(api_key=config.api_key() or "unused", base_url=config.base_url, **common)
    return OpenAICompatibleProvider(client, config.model, config.max_tokens)

