"""``medlink benchmark``: the whole accuracy suite from one configuration file, written up as a report.

config.py reads the suite (datasets × systems), runner.py links and scores every pair, report.py writes the
Markdown tables, the JSON record and the plot.
"""
