"""Rendering: plain text for the terminal, markdown reports from the jinja2 templates in templates/."""
