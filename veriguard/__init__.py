"""veriguard: veriguard."""
