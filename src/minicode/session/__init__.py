"""minicode.session: the Session coordinator (``session.session``) and its JSONL file
(``session.store``, ``session.records``). Import the submodules directly."""
