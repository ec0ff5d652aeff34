"""veriguard: verify."""
