"""Slurm batch scripts (`sbatch`): the `#SBATCH` directives before the first command."""
