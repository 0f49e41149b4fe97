"""minicode.provider: the model endpoint seam.

``types`` (the pure wire types), ``base`` (the ``Provider`` protocol), ``factory`` (makes
one from the configuration) and the OpenAI-compatible adapter (``openai``) with its HTTP
side (``http``, the one module that uses httpx2). Import what you use from its module: the
package re-exports nothing.
"""
