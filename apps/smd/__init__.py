"""Sequential matrix diagonalisation through matrix-core models (the paper\x27s Figures 7-9)."""
