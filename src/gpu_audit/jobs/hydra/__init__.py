"""Hydra configurations that sweep with the Optuna sweeper plugin (`hydra/sweeper: optuna`)."""
