import tomlkit
doc = tomlkit.parse('[a]\nx = 1\n[b]\ny = 2\n[c]\nz = 3\n')
doc['b'] = 2
assert tomlkit.parse(tomlkit.dumps(doc)) == {'a': {'x': 1}, 'b': 2, 'c': {'z': 3}}
