import io
import json
import zipfile

import zipp

UPLOADS = {
    "report.csv": "id,total\n1,10\n2,20\n",
    "notes/readme.txt": "quarterly numbers",
    # what a partner's exporter writes: an absolute-looking member name
    "//exports/summary.json": json.dumps({"rows": 2}),
}


def build_archive(members):
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        for name, text in members.items():
            archive.writestr(name, text)
    buffer.seek(0)
    return buffer


class Inventory:
    def __init__(self):
        self.seen = []

    def walk(self, path, depth=0):
        for entry in path.iterdir():
            self.seen.append(("  " * depth) + entry.name)
            if entry.is_dir():
                self.walk(entry, depth + 1)
        return self.seen


def sizes(archive):
    return {info.filename: info.file_size for info in archive.infolist()}


archive = zipfile.ZipFile(build_archive(UPLOADS))
print("members:", sizes(archive))
inventory = Inventory()
listing = inventory.walk(zipp.Path(archive))
print("\n".join(listing))
print("entries:", len(listing))
