"""Google Cloud: Compute Engine GPU VMs (the collector needs the gcp extra)."""
