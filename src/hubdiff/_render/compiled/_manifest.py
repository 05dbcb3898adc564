"""Written by scripts/compile_templates.py: the jinja2 that compiled the modules beside this,
and the sha256 of each template it compiled."""

JINJA2 = "3.1.6"
SOURCES = {
    "_macros.md.j2": "ea2d0a6994db6baaeb957ffed6a7f5f72062b3ac3c516a73c501e321a538efbd",
    "comment.md.j2": "cf6b4bc69e2175198e22172fab75d91357332b36f3b647f7b3d1237e942a6655",
    "report.md.j2": "8b694060d786bd95c6a78f4a666eeb67a33877799e98fa6bc7f630e4cbf1042b",
    "report.txt.j2": "340381d17588403e20a8ccc81e191a8d093cb397a23d4b7f3def1613c34756c7",
    "summary.md.j2": "15a631538cd521face54c2eba3e0628c10d1fc182494d0521be492ec9fc8437e",
}
