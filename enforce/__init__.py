"""veriguard: enforce."""
