"""SamplingParams: how each prompt is sampled, with vLLM's names and defaults."""
from dataclasses import dataclass, fields
from typing import List, Optional, Union


@dataclass
class SamplingParams:
    """Per-request sampling; the engine validates every field (a bad value raises ValueError
    naming it). Defaults are vLLM's: temperature 1, no top-k/top-p/min-p cut, 16 tokens."""

    n: int = 1
    temperature: float = 1.0
    top_p: float = 1.0
    top_k: int = 0  # 0 or -1: no top-k cut
    min_p: float = 0.0
    seed: Optional[int] = None
    presence_penalty: float = 0.0
    frequency_penalty: float = 0.0
    repetition_penalty: float = 1.0
    max_tokens: Optional[int] = 16  # None: as many as the context leaves
    stop: Optional[Union[str, List[str]]] = None
    stop_token_ids: Optional[List[int]] = None
    ignore_eos: bool = False
    logprobs: Optional[int] = None  # the sampled token's logprob and this many top ones per token
    skip_special_tokens: bool = True

    def request_fields(self, chat: bool) -> dict:
        """The OpenAI-style body fields of these parameters (chat: /v1/chat/completions'
        logprobs form), leaving out the ones at their engine default."""
        body = {}
        defaults = SamplingParams()
        for f in fields(self):
            value = getattr(self, f.name)
            if f.name == "logprobs" or value == getattr(defaults, f.name) and f.name != "max_tokens":
                continue
            if f.name == "top_k" and value == -1:
                continue
            if f.name == "max_tokens" and value is None:
                continue
            body[f.name] = [value] if f.name == "stop" and isinstance(value, str) else value
        if self.logprobs is not None:
            if chat:
                body["logprobs"] = True
                body["top_logprobs"] = self.logprobs
            else:
                body["logprobs"] = self.logprobs
        return body
