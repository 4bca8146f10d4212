"""AsyncLLM: the LLM's streaming for asyncio code (servers): each step of a request's
output is awaited without blocking the event loop."""
import asyncio
from typing import AsyncIterator, Optional, Sequence

from .llm import LLM, Message, Prompt
from .outputs import RequestOutput
from .sampling_params import SamplingParams


class AsyncLLM:
    """Wraps an LLM (or builds one from the same arguments). Waits for the engine run on
    the loop's default executor; many requests may be in flight at once, and the engine
    batches them."""

    def __init__(self, model: Optional[str] = None, *, llm: Optional[LLM] = None, **engine_options):
        self.llm = llm if llm is not None else LLM(model, **engine_options)

    async def generate(self, prompt: Prompt, sampling_params: Optional[SamplingParams] = None) -> AsyncIterator[RequestOutput]:
        async for out in self._drain(self.llm.generate_stream(prompt, sampling_params)):
            yield out

    async def chat(self, messages: Sequence[Message], sampling_params: Optional[SamplingParams] = None) -> AsyncIterator[RequestOutput]:
        async for out in self._drain(self.llm.chat_stream(messages, sampling_params)):
            yield out

    @staticmethod
    async def _drain(stream) -> AsyncIterator[RequestOutput]:
        loop = asyncio.get_running_loop()
        done = object()
        try:
            while True:
                out = await loop.run_in_executor(None, next, stream, done)
                if out is done:
                    return
                yield out
        finally:
            # Cancelled or closed early (even while a step is awaited): abort the request;
            # the executor's pending next() then returns its aborted end.
            stream.close()
