"""Every baseline in baselines/ and every claim in it, as one test each (the hubdiff pytest plugin).

pytest checks/                       # against the Hub ($HF_ENDPOINT, $HF_TOKEN)
pytest checks/ --hub-offline         # from the hubdiff cache only
pytest checks/ --update-baselines    # re-record after a reviewed change
"""


def test_baseline(hubdiff_case, hubdiff_session):
    hubdiff_session.verify(hubdiff_case)
