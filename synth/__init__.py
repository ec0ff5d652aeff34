"""veriguard: synth."""
