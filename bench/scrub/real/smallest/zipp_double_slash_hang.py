import io, zipfile, zipp
zf = zipfile.ZipFile(io.BytesIO(), 'w')
zf.writestr('//x/y', '')
list(zipp.Path(zf).iterdir())
