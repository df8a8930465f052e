"""The knobs a training job states (precision, batch, accumulation, checkpointing, data-loader
workers, torch.compile, the model), read from the job file and from what its command names."""
