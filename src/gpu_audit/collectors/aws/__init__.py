"""Amazon Web Services: EC2 GPU instances (the collector needs the aws extra)."""
