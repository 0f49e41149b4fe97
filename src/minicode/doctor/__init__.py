"""minicode.doctor: what ``minicode --doctor`` finds out about the configured endpoint.

``diagnose`` (``doctor.diagnose``) runs the probes — reaching the host (``provider.reach``),
``GET /models`` (``provider.catalog``), a streamed answer and a streamed tool call through the
real provider (``doctor.streams``) — and ``doctor.findings`` turns each measurement into a
report line (``doctor.report``). The CLI entry is ``cli/doctor_command.py``. Importing this package
loads nothing: every module is imported where it is used.
"""
