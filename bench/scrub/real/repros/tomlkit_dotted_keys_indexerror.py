import sys

import tomlkit

TOOLS = {
    "black": {"line-length": 100},
    "ruff": {"lint.select": ["E", "F"], "lint.ignore": ["E501"]},
}


def dotted(name):
    return tomlkit.key(name.split(".")) if "." in name else name


def tool_table(options):
    table = tomlkit.table()
    table.add("enabled", True)
    for name, value in options.items():
        table.add(dotted(name), value)
    return table


class PyProject:
    def __init__(self, project):
        self.doc = tomlkit.document()
        self.doc.add("project", {"name": project, "version": "0.1.0"})
        self.tools = tomlkit.table(is_super_table=True)

    def configure(self, tools):
        for name, options in tools.items():
            self.tools.add(name, tool_table(options))
        self.doc.add("tool", self.tools)
        return self.doc


project = PyProject("inventory")
print(tomlkit.dumps(project.configure(TOOLS)))
print("python", sys.version_info[:2])
