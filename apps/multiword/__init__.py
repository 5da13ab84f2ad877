"""Multi-word GEMM through matrix-core models (the paper's section 8, Figures 4-6)."""
