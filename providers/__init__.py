"""LLM providers, below both synthesis and the online extractor: structured output in, structured output out.

Every provider answers a `CompletionRequest` (a prompt plus the JSON Schema the answer must satisfy)
with a `Completion` whose `data` has been checked against that schema, or raises a `ProviderError`
with a stable dotted `code` and a message that says how to fix the problem. Modules by job: `types`,
`errors`, `schema` (the validator), `prices`, `anthropic_api`, `openai_api`, `replay`, `config`,
`extraction` (the argument-extraction request). Nothing here imports an SDK or httpx2 at package import.
"""
