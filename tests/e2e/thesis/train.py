"""Placeholder for the thesis' training entry point (never run by the tests)."""
import torch

print(torch.__version__, torch.cuda.is_available())
