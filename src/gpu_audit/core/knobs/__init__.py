"""Reading training knobs from text, shared by the job parsers (jobs/knobs) and the Kubernetes
collector (a pod's command and args): a knob as found, each framework's spellings, and flags."""
