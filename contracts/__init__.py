"""veriguard: contracts."""
