"""Worker isolation: everything that runs candidate text in a bounded subprocess.

``process`` (one bounded worker: rlimits, deadlines, restart), ``protocol`` (the request and
reply lines), ``worker_main`` (the subprocess's main loop), ``prepare`` (the workers' preflight
of input lines), ``pool`` (N workers, results in input order) and ``client`` (the parent's shared
worker for one-off grading). The worker side imports nothing of the engine; this package
imports nothing here so that starting a worker stays cheap.
"""
