; Inno Setup 6 script for the Windows installer. packaging/build.py runs it on Windows as
;   ISCC /DAppVersion=0.1.0 /DVariant=cpu /DSourceDir=...\dist\workstation /DOutputDir=...\dist
;        [/DSliced] packaging\windows\workstation.iss
; and it can be run by hand the same way after `python packaging/build.py` made the folder.
; /DSliced splits the installer into setup.exe plus .bin slices under 2 GB each (the CUDA build:
; all files go in one folder for setup.exe to find them).

#ifndef AppVersion
  #error Pass the version: /DAppVersion=X.Y.Z (workstation.__version__)
#endif
#ifndef SourceDir
  #define SourceDir "..\..\dist\workstation"
#endif
#ifndef OutputDir
  #define OutputDir "..\..\dist"
#endif
#ifndef Variant
  #define Variant "cpu"
#endif

[Setup]
AppId={{6B3C1F0E-7A52-4C8F-9D1E-2F4B5A6C7D80}
AppName=Workstation
AppVersion={#AppVersion}
AppVerName=Workstation {#AppVersion}
AppPublisher=Workstation developers
DefaultDirName={autopf}\Workstation
DefaultGroupName=Workstation
DisableProgramGroupPage=yes
UninstallDisplayIcon={app}\workstation.exe
OutputDir={#OutputDir}
OutputBaseFilename=workstation-{#AppVersion}-windows-x64-{#Variant}-setup
Compression=lzma2/max
SolidCompression=yes
ArchitecturesAllowed=x64compatible
ArchitecturesInstallIn64BitMode=x64compatible
PrivilegesRequired=lowest
PrivilegesRequiredOverridesAllowed=dialog
WizardStyle=modern
#ifdef Sliced
DiskSpanning=yes
DiskSliceSize=2000000000
#endif

[Tasks]
Name: "desktopicon"; Description: "{cm:CreateDesktopIcon}"; GroupDescription: "{cm:AdditionalIcons}"; Flags: unchecked

[Files]
Source: "{#SourceDir}\*"; DestDir: "{app}"; Flags: ignoreversion recursesubdirs createallsubdirs

[Icons]
Name: "{group}\Workstation"; Filename: "{app}\workstation.exe"
Name: "{group}\Uninstall Workstation"; Filename: "{uninstallexe}"
Name: "{autodesktop}\Workstation"; Filename: "{app}\workstation.exe"; Tasks: desktopicon

[Run]
Filename: "{app}\workstation.exe"; Description: "{cm:LaunchProgram,Workstation}"; Flags: nowait postinstall skipifsilent

[UninstallDelete]
; Only the program folder: the user's data (%LOCALAPPDATA%\workstation) stays.
Type: filesandordirs; Name: "{app}"
