"""In-process adapters: real implementations of a budget discipline behind the `Scheduler` interface.

An adapter drives a third-party implementation with scripted collaborators and turns
every effect it performs into a host call on its profile's wire vocabulary, so the
conformance runner (`turnbound conform PROFILE --adapter MODULE:NAME`) checks it like
any other implementation. Adapters import their implementation lazily: this package
imports without it installed.
"""
