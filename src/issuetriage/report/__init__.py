"""The live report: figures read back from the store (report/data.py), rendered as static HTML
with plots (report/html.py); the web app serves the same pages."""
