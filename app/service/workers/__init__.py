"""Workers: loops that hold database leases and act through the pipeline."""
