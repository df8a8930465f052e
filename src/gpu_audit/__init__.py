"""gpu-audit: keep ML training GPU spend matched to need."""

__version__ = "0.1.0"
