"""`gpu-audit diff`: what a change to job configs costs, for code review (docs/code-review.md)."""
