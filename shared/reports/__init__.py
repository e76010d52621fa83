"""Presentation: job views for the API and replay, FOCUS rows, Parquet and CSV files.
Serializes what the domain computed; holds no cost rule of its own."""
