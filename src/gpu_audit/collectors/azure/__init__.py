"""Azure: GPU VMs, scale sets and Azure ML compute, through Resource Graph or ARM."""
