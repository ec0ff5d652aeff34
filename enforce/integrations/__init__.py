"""Enforcement points for agent frameworks, each a thin layer over enforce.guard.Guard.

Import the one you use: enforce.integrations.anthropic_sdk (the Anthropic tool runner and the
hand-written tool-use loop), enforce.integrations.openai_agents (a tool input guardrail; needs the
optional `openai-agents`), enforce.integrations.mcp_proxy (a stdio MCP proxy; needs `mcp`).
"""
