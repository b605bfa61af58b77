"""`issuetriage serve`: the review queue and report pages as a small local web app."""
