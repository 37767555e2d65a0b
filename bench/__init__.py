"""The benchmarks (scripts run by hand or by ``tox -e bench``) and the bench page.

A package only so that the tests can import ``bench.page``; the scripts import
``benchlib`` from their own folder and run as scripts.
"""
