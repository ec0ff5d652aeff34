"""List prices of the hosted models, and the cost of a call at list price."""
from __future__ import annotations

import re

# LIST PRICES, USD per million (input, output) tokens, from the model pages on platform.claude.com
# as read on 2026-11-22. UPDATE THIS TABLE when prices change. Batch, cache and regional (inference_geo)
# rates are not modelled. A model missing here costs None (unknown), never 0.
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


def cost_usd(provider: str, model: str, input_tokens: int, output_tokens: int) -> float | None:
    """Token cost at list price; 0 for local/replayed calls, None for an unpriced Anthropic model."""
    if provider != "anthropic" or input_tokens == output_tokens == 0:
        return 0.0
    price = ANTHROPIC_PRICES_USD_PER_MTOK.get(re.sub(r"-\d{8}$", "", model))  # drop a date suffix
    if price is None:
        return None
    price_in, price_out = price
    return (input_tokens * price_in + output_tokens * price_out) / 1_000_000
