"""List prices of the hosted models, and the cost of a call at list price."""
from __future__ import annotations

import re

# LIST PRICES, USD per million (input, output) tokens, from the model pages on platform.claude.com
# as read on 2026-11-22. UPDATE THIS TABLE when prices change. Batch and regional (inference_geo) rates are not
# modelled. A model missing here costs None (unknown), never 0.
ANTHROPIC_PRICES_USD_PER_MTOK: dict[str, tuple[float, float]] = {
    "claude-sonnet-5-5": (2.00, 10.00),
    "claude-sonnet-5": (2.00, 10.00),
    "claude-opus-5-5": (4.00, 20.00),
    "claude-opus-5": (5.00, 25.00),
    "claude-fable-5-1": (10.00, 50.00),
    "claude-haiku-4-5": (1.00, 5.00),
    "claude-sonnet-4-5": (3.00, 15.00),
    "claude-opus-4-5": (5.00, 25.00),
}


# prompt-cache rates, as multiples of the input price: a (5-minute) cache write and a cache read
CACHE_WRITE_RATE, CACHE_READ_RATE = 1.25, 0.10


def cost_usd(provider: str, model: str, input_tokens: int, output_tokens: int,
             cache_tokens: tuple[int, int] = (0, 0)) -> float | None:
    """Token cost at list price, the prompt cache's writes and reads (types.cache_tokens) included; 0 for
    local/replayed calls, None for an unpriced Anthropic model."""
    written, read = cache_tokens
    if provider != "anthropic" or input_tokens == output_tokens == written == read == 0:
        return 0.0
    price = ANTHROPIC_PRICES_USD_PER_MTOK.get(re.sub(r"-\d{8}$", "", model))  # drop a date suffix
    if price is None:
        return None
    price_in, price_out = price
    inputs = input_tokens + written * CACHE_WRITE_RATE + read * CACHE_READ_RATE
    return (inputs * price_in + output_tokens * price_out) / 1_000_000
