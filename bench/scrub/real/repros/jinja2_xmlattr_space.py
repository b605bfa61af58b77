import html

from jinja2 import Environment, select_autoescape

TEMPLATE = """
<ul>
{% for item in items %}
  <li{{ item.attrs|xmlattr }}>{{ item.label }}</li>
{% endfor %}
</ul>
"""


def user_items():
    return [
        {"label": "Home", "attrs": {"class": "nav", "data-id": 1}},
        {"label": "Profile", "attrs": {"class": "nav", "title": "Your profile"}},
        # attribute names come from a user-editable "custom attributes" field
        {"label": "Promo", "attrs": {"class": "nav", "onmouseover=alert(1) x": "y"}},
    ]


class Renderer:
    def __init__(self):
        self.env = Environment(autoescape=select_autoescape(default=True))
        self.count = 0

    def render(self, items):
        self.count += 1
        try:
            return self.env.from_string(TEMPLATE).render(items=items)
        except ValueError as exc:
            return f"<!-- refused: {html.escape(type(exc).__name__)} -->"


renderer = Renderer()
out = renderer.render(user_items())
print(out)
print("renders:", renderer.count)
assert "onmouseover" not in out
