"""A payments MCP server (mcp SDK v2, MCPServer) for examples/mcp_server_behind_proxy.py. It moves no
money: it says what it would have sent."""
from mcp.server.mcpserver import MCPServer

app = MCPServer("payments")


@app.tool()
def send_payment(recipient: str, amount_cents: int, currency: str, method: str) -> str:
    """Send a payment to a vendor."""
    return f"sent {amount_cents} cents to {recipient} by {method}"


@app.resource("ledger://today")
def ledger() -> str:
    """What the user sent today."""
    return "sent today: 0 cents"


if __name__ == "__main__":
    app.run()
